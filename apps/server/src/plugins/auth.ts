/**
 * Bearer-token auth with scopes. Each route declares the scope it needs in its config
 * (`config: { scope: 'write' }`); routes without one (health, API docs, the demo) are open.
 * Tokens are compared as SHA-256 digests with timingSafeEqual against every configured token,
 * so neither a token's length nor its first differing byte shows in the timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Scope, Token } from '../config.js';
import { HttpError } from '../errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a request needs; absent: no authentication. */
    scope?: Scope;
  }
  interface FastifyRequest {
    /** Who made the request: a token's name, or undefined without auth. */
    principal: string | undefined;
    /** What the request may do, once a scoped route has checked it: its token's scopes (every scope without auth). */
    scopes: ReadonlySet<Scope> | undefined;
  }
}

interface Known {
  digest: Buffer;
  scopes: Set<Scope>;
  name: string;
}

const EVERY: ReadonlySet<Scope> = grants(['admin']);

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** The scopes a token grants: admin includes read and write. */
export function grants(scopes: Scope[]): Set<Scope> {
  return new Set<Scope>(scopes.includes('admin') ? ['read', 'write', 'admin'] : scopes);
}

export function authenticate(known: Known[], header: string | undefined): Known | undefined {
  const m = header ? /^Bearer ([\x21-\x7e]{1,512})$/i.exec(header) : null;
  if (!m) return undefined;
  const presented = sha256(m[1]!);
  let found: Known | undefined;
  for (const k of known) if (timingSafeEqual(presented, k.digest) && !found) found = k; // no early exit
  return found;
}

/** The name of the token an Authorization header presents, if it is a configured one. */
export function verifier(tokens: Token[]): (header: string | undefined) => string | undefined {
  const known: Known[] = tokens.map((t, i) => ({ digest: sha256(t.token), scopes: grants(t.scopes), name: t.name ?? `token${i + 1}` }));
  return (header) => authenticate(known, header)?.name;
}

export default fp(
  async (app: FastifyInstance, opts: { tokens: Token[]; noAuth: boolean }) => {
    const known: Known[] = opts.tokens.map((t, i) => ({ digest: sha256(t.token), scopes: grants(t.scopes), name: t.name ?? `token${i + 1}` }));
    app.decorateRequest('principal', undefined);
    app.decorateRequest('scopes', undefined);
    const check = async (request: FastifyRequest) => {
      const scope = request.routeOptions.config.scope;
      if (!scope) return;
      if (opts.noAuth) {
        request.scopes = EVERY;
        return;
      }
      const header = request.headers.authorization;
      const who = authenticate(known, header);
      const challenge = { 'www-authenticate': `Bearer realm="kura", scope="${scope}"` };
      if (!who) {
        throw new HttpError('UNAUTHORIZED', header ? 'the bearer token is not valid' : 'this needs a bearer token (Authorization: Bearer <token>)', {}, challenge);
      }
      request.principal = who.name;
      request.scopes = who.scopes;
      if (!who.scopes.has(scope)) throw new HttpError('FORBIDDEN', `this needs the ${scope} scope, which this token lacks`, { scope });
    };
    // A route-level hook, appended to each scoped route as it is declared: it runs after the
    // rate limiter's (also route-level, registered earlier), so failed logins are counted, and
    // before any body is parsed.
    app.addHook('onRoute', (route) => {
      if (!route.config?.scope) return;
      const own = route.onRequest ? [route.onRequest].flat() : [];
      route.onRequest = [...own, check] as typeof route.onRequest;
    });
  },
  { name: 'kura-auth' },
);
