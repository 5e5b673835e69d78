/** Request paths relative to the base URL; identifiers are URL-encoded so `a/b` stays one segment. */
export const intakePaths = {
  events: '/events',
  event: (id: string) => `/events/${encodeURIComponent(id)}`,
  subscriptions: '/subscriptions',
  subscription: (id: string) => `/subscriptions/${encodeURIComponent(id)}`,
  prescriptions: '/prescriptions',
  prescription: (externalId: string) => `/prescriptions/${encodeURIComponent(externalId)}`,
} as const;
