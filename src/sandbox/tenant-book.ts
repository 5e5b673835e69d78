import { timingSafeEqual } from 'node:crypto';
import type { Tenant } from './tenant.js';
import { UnknownCredentialError } from './unknown-credential-error.js';

export interface Credential {
  key: string;
  secret: string;
}

/**
 * The operator's accounts: each credential's secret (while active) and its tenant (kept across a
 * revoke and re-add, as the operator keeps an account's data). Secrets are compared in constant time.
 */
export class TenantBook {
  private readonly secrets = new Map<string, string>();
  private readonly tenants = new Map<string, Tenant>();

  /** Adds (or re-enables) a credential; a new key gets the tenant `create` makes (its number given). */
  add(credential: Credential, create: (number: number) => Tenant): void {
    this.secrets.set(credential.key, credential.secret);
    if (!this.tenants.has(credential.key)) this.tenants.set(credential.key, create(this.tenants.size + 1));
  }

  /** Revokes a credential: its requests get 401 from now on. Returns whether it was active. */
  revoke(key: string): boolean {
    return this.secrets.delete(key);
  }

  /** The tenant of an active key/secret pair, or undefined. */
  authenticate(key: string, secret: string): Tenant | undefined {
    const expected = this.secrets.get(key);
    if (expected === undefined) return undefined;
    const a = Buffer.from(expected);
    const b = Buffer.from(secret);
    return a.length === b.length && timingSafeEqual(a, b) ? this.tenants.get(key) : undefined;
  }

  /** Active credential keys, oldest first (the first is the default for seeding and injection). */
  activeKeys(): string[] {
    return [...this.secrets.keys()];
  }

  isActive(key: string): boolean {
    return this.secrets.has(key);
  }

  /** The tenant of `key`, or of the first active key when none is given; refuses an unknown one. */
  tenantOf(key: string | undefined): Tenant {
    const chosen = key ?? this.activeKeys()[0];
    const tenant = chosen === undefined ? undefined : this.tenants.get(chosen);
    if (!tenant || chosen === undefined) throw new UnknownCredentialError(chosen ?? '(none)');
    return tenant;
  }

  /** Every tenant by key, revoked ones too. */
  entries(): [string, Tenant][] {
    return [...this.tenants.entries()];
  }
}
