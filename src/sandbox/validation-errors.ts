import type { z } from 'zod';

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let current = root;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/**
 * The 422 `errors` object: messages keyed by dotted field path
 * (`prescription.patient.dob`). A missing required field reads "is required"
 * rather than zod's type message.
 */
export function errorsByField(issues: readonly z.core.$ZodIssue[], body: unknown): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of issues) {
    const path = issue.path.map(String).join('.') || 'base';
    const missing = issue.code === 'invalid_type' && valueAt(body, issue.path) === undefined;
    const message = missing ? 'is required' : issue.message;
    const list = (errors[path] ??= []);
    if (!list.includes(message)) list.push(message);
  }
  return errors;
}
