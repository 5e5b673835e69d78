import type { z } from 'zod';
import type { SchemaIssue } from './response-schema-error.js';

/** The path written for an issue about the whole document. */
export const WHOLE_BODY_PATH = '(body)';

/** zod issues as `{path, message}` pairs: dotted paths, messages naming the rule (zod messages never quote the value). */
export function schemaIssuesFrom(error: z.ZodError): SchemaIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.length > 0 ? issue.path.map(String).join('.') : WHOLE_BODY_PATH,
    message: issue.message,
  }));
}
