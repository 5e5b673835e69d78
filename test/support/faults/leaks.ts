import { expect } from 'vitest';
import type { CapturedSource, CaptureKind, OutputCapture } from './capture.js';
import type { Identity } from './local-prescriptions.js';

/** A string that must never appear in output, with a label safe to print. */
export interface Needle {
  label: string;
  value: string;
}

export interface Leak {
  needle: string;
  source: string;
  /** offset of the first occurrence in that source */
  at: number;
}

/** Output kinds the no-PHI / no-secret promise covers: logs, errors, health bodies, metrics. */
const SCANNED: readonly CaptureKind[] = ['log', 'health', 'metrics'];

/** Tokens a word-like needle can be: a date, a run of letters, a run of digits. */
const TOKEN = /\d{4}-\d{2}-\d{2}|[A-Za-z]+|\d+/g;
const WORD_LIKE = /^(\d{4}-\d{2}-\d{2}|[A-Za-z]+|\d+)$/;

/**
 * Every needle found in every scanned source (pure; the report names labels,
 * never values). Word-like needles (names, dates, digit runs) are matched as
 * whole tokens through a set, so thousands of canaries scan megabytes of logs
 * in one pass and "Testpatab" is not reported as a leak of "Testpata"; other
 * needles (secrets, phones as written) are matched as substrings.
 */
export function findLeaks(sources: readonly CapturedSource[], needles: readonly Needle[]): Leak[] {
  const byToken = new Map<string, Needle>();
  const substrings: Needle[] = [];
  for (const needle of needles) {
    if (WORD_LIKE.test(needle.value)) byToken.set(needle.value, needle);
    else substrings.push(needle);
  }
  const leaks: Leak[] = [];
  for (const source of sources) {
    if (!SCANNED.includes(source.kind)) continue;
    const found = new Set<string>();
    for (const match of source.text.matchAll(TOKEN)) {
      const needle = byToken.get(match[0]);
      if (needle && !found.has(needle.value)) {
        found.add(needle.value);
        leaks.push({ needle: needle.label, source: source.source, at: match.index });
      }
    }
    for (const needle of substrings) {
      const at = source.text.indexOf(needle.value);
      if (at >= 0) leaks.push({ needle: needle.label, source: source.source, at });
    }
  }
  return leaks;
}

/**
 * Canary needles from patient identities: first and last names and DOBs. (A
 * DOB's bare digits are not a needle here: with thousands of fixtures, 8-digit
 * runs would hit timestamps by chance; the canary scenario adds its own
 * distinctive values.)
 */
export function identityNeedles(identities: readonly Identity[]): Needle[] {
  const needles = new Map<string, Needle>();
  const add = (label: string, value: string | null | undefined, minLength: number) => {
    const trimmed = value?.trim();
    if (trimmed && trimmed.length >= minLength) needles.set(trimmed, { label, value: trimmed });
  };
  for (const identity of identities) {
    add('patient first name', identity.patient_first_name, 4);
    add('patient last name', identity.patient_last_name, 4);
    add('patient dob', identity.patient_dob, 8);
  }
  return [...needles.values()];
}

/** Canary needles for a phone number: as written and as bare digits. */
export function phoneNeedles(phone: string): Needle[] {
  return [
    { label: 'patient phone', value: phone },
    { label: 'patient phone (digits)', value: phone.replace(/\D/g, '') },
  ];
}

/** The API secret and the bearer token derived from it. */
export function secretNeedles(key: string, secret: string): Needle[] {
  return [
    { label: 'api secret', value: secret },
    { label: 'bearer token', value: Buffer.from(`${key}:${secret}`).toString('base64') },
  ];
}

/**
 * The shared canary check every scenario ends with: no needle in any captured
 * log line, error output, health body or metric. Fails naming label and source.
 */
export function expectNoLeaks(capture: OutputCapture, needles: readonly Needle[]): void {
  expect(needles.length, 'the canary check needs needles to look for').toBeGreaterThan(0);
  const leaks = findLeaks(capture.all(), needles);
  expect(leaks, 'canary or secret found in captured output').toEqual([]);
}
