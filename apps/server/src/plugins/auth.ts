/**
 * Bearer-token auth with scopes and path prefixes (decision 0060). Each route declares the scope
 * it needs in its config (`config: { scope: 'write' }`); routes without one (health, API docs,
 * the demo) are open. A token comes from the server's configuration (`KURA_TOKENS`) or is kept
 * in the store (`kura token add`, only its hash): configured tokens are compared as SHA-256
 * digests with timingSafeEqual against every one, so neither a token's length nor its first
 * differing byte shows in the timing; a kept token is looked up by the hash of what was
 * presented (an index lookup, whose timing says nothing about a secret of 256 random bits).
 *
 * A request that passes gets `request.access` (its scopes and prefixes) and `request.store`:
 * the store itself, or for a token limited to prefixes the view of it that lets nothing else
 * through (access/limited-store.ts). Routes read and write through `request.store`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Store } from '@kura/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Scope, Token } from '../config.js';
import { HttpError } from '../errors.js';
import { limitStore } from '../access/limited-store.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a request needs (`any`: a token, of any scope); absent: no authentication. */
    scope?: Scope | 'any';
  }
  interface FastifyRequest {
    /** Who made the request: a token's name, or undefined without auth. */
    principal: string | undefined;
    /** What the request may do, once a scoped route has checked it (everything without auth). */
    access: Access | undefined;
    /** The store as this request may see it (set on scoped routes; see above). */
    store: Store;
  }
}

/** What a token lets a request do: its scopes, and the path prefixes it reaches (absent: every path). */
export interface Access {
  scopes: ReadonlySet<Scope>;
  prefixes?: readonly string[];
}

interface Known extends Access {
  name: string;
  digest: Buffer;
}

const EVERY: Access = { scopes: grants(['admin']) };

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** The scopes a token grants: admin includes every other. */
export function grants(scopes: readonly Scope[]): Set<Scope> {
  return new Set<Scope>(scopes.includes('admin') ? ['read', 'write', 'delete', 'admin'] : scopes);
}

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/i;

function knownOf(tokens: Token[]): Known[] {
  return tokens.map((t, i) => ({ digest: sha256(t.token), scopes: grants(t.scopes), name: t.name ?? `token${i + 1}`, ...(t.prefixes ? { prefixes: t.prefixes } : {}) }));
}

/** The configured token an Authorization header presents, if any. */
export function authenticate(known: Known[], header: string | undefined): Known | undefined {
  const m = header ? BEARER.exec(header) : null;
  if (!m) return undefined;
  const presented = sha256(m[1]!);
  let found: Known | undefined;
  for (const k of known) if (timingSafeEqual(presented, k.digest) && !found) found = k; // no early exit
  return found;
}

/**
 * The name of the configured token an Authorization header presents, if any (the rate
 * limiter's key). `tokens` is read when first needed: `kura serve` may add its generated one
 * after the app is built.
 */
export function verifier(tokens: Token[]): (header: string | undefined) => string | undefined {
  let known: Known[] | undefined;
  return (header) => authenticate((known ??= knownOf(tokens)), header)?.name;
}

export default fp(
  async (app: FastifyInstance, opts: { tokens: Token[]; noAuth: boolean }) => {
    let known: Known[] | undefined;
    const views = new Map<string, Store>();
    /** The store as `access` sees it: one view per set of prefixes. */
    const storeFor = (access: Access): Store => {
      if (!access.prefixes) return app.store;
      const key = JSON.stringify(access.prefixes);
      let view = views.get(key);
      if (!view) views.set(key, (view = limitStore(app.store, access.prefixes)));
      return view;
    };
    /** The token a header presents: configured, else kept in the store. */
    const who = async (header: string | undefined): Promise<(Access & { name: string }) | undefined> => {
      const configured = authenticate((known ??= knownOf(opts.tokens)), header);
      if (configured) return configured;
      const m = header ? BEARER.exec(header) : null;
      if (!m) return undefined;
      const kept = await app.store.tokenOf(m[1]!);
      return kept ? { name: kept.name, scopes: grants(kept.scopes), ...(kept.prefixes ? { prefixes: kept.prefixes } : {}) } : undefined;
    };
    app.decorateRequest('principal', undefined);
    app.decorateRequest('access', undefined);
    app.decorateRequest('store', null as unknown as Store);
    const check = async (request: FastifyRequest, reply: FastifyReply) => {
      const scope = request.routeOptions.config.scope;
      if (!scope) return;
      if (opts.noAuth) {
        request.access = EVERY;
        request.store = app.store;
        return;
      }
      const header = request.headers.authorization;
      const found = await who(header);
      const challenge = { 'www-authenticate': `Bearer realm="kura", scope="${scope}"` };
      if (!found) {
        throw new HttpError('UNAUTHORIZED', header ? 'the bearer token is not valid' : 'this needs a bearer token (Authorization: Bearer <token>)', {}, challenge);
      }
      request.principal = found.name;
      // The request's log lines name its token (its name, never its secret): "which client did
      // that delete?" had no answer in the logs (a trial). The reply's line too.
      request.log = reply.log = request.log.child({ token: found.name });
      request.access = found;
      request.store = storeFor(found);
      if (scope !== 'any' && !found.scopes.has(scope)) throw new HttpError('FORBIDDEN', `this needs the ${scope} scope, which this token lacks`, { scope });
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
