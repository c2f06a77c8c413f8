/**
 * Access tokens kept in the store (decision 0060): what `kura token add` makes and every server
 * of the store accepts, besides the tokens of its own configuration. Added and revoked through
 * the log (`token` operation), like everything else, so that every server of a shared bucket
 * sees the same tokens once it has read the log that far.
 *
 * Only the SHA-256 of a secret is kept. A secret is `kura_` and 43 base64url characters (32
 * random bytes): a hash of that much randomness cannot be turned back into the secret, so a
 * plain hash (not a password KDF) is enough, and the fixed form lets a server's log redaction
 * find secrets it was never told (apps/server/src/logging.ts).
 */
import { InvalidInputError, sha256 } from '@kura/core';
import { z } from 'zod';
import type { StoreContext } from '../store-context.js';
import { commitOne } from '../store-context.js';
import type { TokenRow } from '../catalog/statements.js';

/**
 * What a token may do. `write` adds without removing (puts, uploads, tags, metadata, pins,
 * snapshots); `delete` removes (paths, versions, documents, snapshots, forget); `admin` runs
 * the store-wide operations (GC, verify, policies, tokens) and includes the other three.
 */
export const SCOPES = ['read', 'write', 'delete', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** A kept token as listed: never its secret, nor its hash. */
export interface StoredToken {
  name: string;
  scopes: Scope[];
  /** The path prefixes it may reach; undefined: every path. */
  prefixes?: string[];
  createdAt: string;
}

/** The form of a secret this module makes: the fixed part and 32 random bytes in base64url. */
export const SECRET_PATTERN = /kura_[A-Za-z0-9_-]{43}/g;

/**
 * Whether `p` can begin a path (FORMAT.md §11: relative, `/`-separated, no empty, `.` or `..`
 * segment, no backslash or control character): a token's prefix that cannot (`../`, `/abs`,
 * `a//`) reaches nothing, and was accepted without a word.
 */
export function isPathPrefix(p: string): boolean {
  if (p === '' || p.startsWith('/') || /[\u0000-\u001f\u007f\\]/.test(p)) return false;
  const segments = p.split('/');
  const last = segments.pop()!;
  return segments.every((s) => s !== '' && s !== '.' && s !== '..') && last !== '.' && last !== '..';
}

const prefix = z
  .string()
  .min(1, 'a prefix is not empty (leave prefixes out for every path)')
  .max(4096)
  .refine(isPathPrefix, 'a prefix begins a path: relative, without empty, "." or ".." segments');

const NewToken = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][\w.-]{0,63}$/, 'a name is 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'),
    scopes: z.array(z.enum(SCOPES)).min(1, 'a token needs at least one scope'),
    prefixes: z
      .array(prefix)
      .min(1)
      .max(64)
      .optional(),
  })
  .strict()
  // Every admin action is store-wide (GC, verify, tokens, policies): a limited admin token
  // could do none of them, and was made without a word (a trial).
  .refine((t) => !(t.prefixes && t.scopes.includes('admin')), { message: 'admin actions are store-wide (gc, verify, tokens, policies): a token limited to prefixes cannot have the admin scope', path: ['scopes'] });
export type NewToken = z.input<typeof NewToken>;

function checked(input: NewToken): z.output<typeof NewToken> {
  const r = NewToken.safeParse(input);
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const field = issue.path.join('.') || 'token';
  throw new InvalidInputError(`token: ${field}: ${issue.message}`, field);
}

const hashOf = (secret: string) => sha256(new TextEncoder().encode(secret)).slice('sha256:'.length);

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromRow(r: TokenRow): StoredToken {
  const prefixes = r.prefixes === null ? undefined : (JSON.parse(r.prefixes) as string[]);
  return { name: r.name, scopes: JSON.parse(r.scopes) as Scope[], ...(prefixes ? { prefixes } : {}), createdAt: new Date(r.created_at).toISOString() };
}

/** Makes a token and keeps its hash: answers its secret, which exists nowhere else from now on. */
export async function addToken(ctx: StoreContext, input: NewToken): Promise<{ token: StoredToken; secret: string }> {
  const t = checked(input);
  const secret = `kura_${base64url(crypto.getRandomValues(new Uint8Array(32)))}`;
  const scopes = [...new Set(t.scopes)].sort((a, b) => SCOPES.indexOf(a) - SCOPES.indexOf(b));
  const prefixes = t.prefixes ? [...new Set(t.prefixes)].sort() : null;
  await commitOne(ctx, { op: 'token', name: t.name, hash: hashOf(secret), scopes, prefixes });
  const made = ctx.db.read(() => ctx.st.tokenByHash.get(hashOf(secret)));
  if (!made) throw new InvalidInputError(`token ${t.name} was revoked as it was made`, 'name');
  return { token: fromRow(made), secret };
}

/** Revokes the token named `name`; false when there was none. */
export async function revokeToken(ctx: StoreContext, name: string): Promise<boolean> {
  if (typeof name !== 'string' || name.length === 0 || name.length > 64) throw new InvalidInputError('name: a token name is 1 to 64 characters', 'name');
  return (await commitOne(ctx, { op: 'token', name, hash: null })) as boolean;
}

/** The tokens kept in the store, by name. */
export function tokens(ctx: StoreContext): StoredToken[] {
  return ctx.db.read(() => ctx.st.tokensAll.all()).map(fromRow);
}

/** The kept token whose secret `secret` is, if any (one lookup by its hash). */
export function tokenOf(ctx: StoreContext, secret: string): StoredToken | undefined {
  const row = ctx.db.read(() => ctx.st.tokenByHash.get(hashOf(secret)));
  return row ? fromRow(row) : undefined;
}
