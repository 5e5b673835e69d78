import type { Identity } from './local-prescriptions.js';

/** A well-formed event as the operator publishes it. */
export function wellFormedEvent(
  id: string,
  name: string,
  identity: Identity,
  occurredAt: string,
  payload: unknown = {},
): Record<string, unknown> {
  return {
    id,
    name,
    prescription_identity: identity,
    pharmacy_npi: '1689411712',
    occurred_at: occurredAt,
    api_version: '2024-12-10',
    subscription_id: `sub-${id}`,
    payload,
  };
}

/** Entries that must each be quarantined as malformed, with a label for failure messages. */
export function malformedEntries(template: Record<string, unknown>, tag: string): Array<{ label: string; raw: unknown }> {
  const without = (key: string) => Object.fromEntries(Object.entries({ ...template, id: `${tag}-no-${key}` }).filter(([k]) => k !== key));
  return [
    {
      label: 'missing id',
      raw: Object.fromEntries(Object.entries({ ...template, subscription_id: `${tag}-noid` }).filter(([k]) => k !== 'id')),
    },
    { label: 'missing name', raw: without('name') },
    { label: 'missing identity', raw: without('prescription_identity') },
    { label: 'missing occurred_at', raw: without('occurred_at') },
    { label: 'id of the wrong type', raw: { ...template, id: 12345, subscription_id: `${tag}-numid` } },
    { label: 'name of the wrong type', raw: { ...template, id: `${tag}-numname`, name: 42 } },
    { label: 'identity of the wrong type', raw: { ...template, id: `${tag}-stridentity`, prescription_identity: 'someone' } },
    { label: 'occurred_at not a time', raw: { ...template, id: `${tag}-baddate`, occurred_at: 'yesterday-ish' } },
    { label: 'null entry', raw: null },
    { label: 'number entry', raw: 42 },
    { label: 'string entry', raw: `${tag}-just a string` },
    { label: 'array entry', raw: [tag, 1, 2] },
  ];
}
