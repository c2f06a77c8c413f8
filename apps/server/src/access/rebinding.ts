/**
 * DNS-rebinding protection for `/mcp` (decision 0057), and for every route of a server that
 * runs without tokens (app.ts): there, nothing else keeps a page the user visits from calling
 * the store — a form's cross-site POST needs no CORS, a rebound name no token.
 *
 * A page on another site can make a browser send requests to a server on the user's machine
 * by pointing its own name at 127.0.0.1; such a request names the foreign site in its Host
 * header, and its page's origin in Origin. So: Host must be a name this server is reached by
 * (the loopback names, any IP address — a rebound name is always a name —, the address it
 * listens on, and the configured `allowedHosts`), and an Origin, when a browser sends one, must
 * be one of those hosts' or a configured CORS origin. Clients that are not browsers send no
 * Origin.
 */
import type { ServerConfig } from '../config.js';

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];
/** Addresses that mean "every interface": not a name of their own (as IP addresses, they pass anyway). */
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

export interface RebindingPolicy {
  /** Host names (lower case, IPv6 in brackets) requests may name; `*`: any. */
  hosts: ReadonlySet<string> | '*';
  /** Origins pages may call from besides the allowed hosts' own; `*`: any. */
  origins: ReadonlySet<string> | '*';
}

export function rebindingPolicy(config: Pick<ServerConfig, 'host' | 'allowedHosts' | 'corsOrigins'>): RebindingPolicy {
  const listening = hostnameOf(config.host.includes(':') && !config.host.startsWith('[') ? `[${config.host}]` : config.host);
  const hosts = config.allowedHosts.includes('*')
    ? '*'
    : new Set([...LOOPBACK, ...(listening && !WILDCARD.has(listening) ? [listening] : []), ...config.allowedHosts.map((h) => hostnameOf(h) ?? h)]);
  const origins = config.corsOrigins.includes('*') ? '*' : new Set(config.corsOrigins);
  return { hosts, origins };
}

/** The host name of a Host header's value (without its port), or undefined when it is not one. */
function hostnameOf(host: string): string | undefined {
  try {
    const url = new URL(`http://${host}`);
    return url.username || url.password || url.pathname !== '/' || url.search || url.hash ? undefined : url.hostname;
  } catch {
    return undefined;
  }
}

/**
 * hostnameOf a request's Host, without its trailing dot; remembered, as clients send the same
 * one request after request (parsing it as a URL was ~2.5 µs of a 1 KB POST's ~120).
 */
function requestHostname(host: string): string | undefined {
  let name = hostnames.get(host);
  if (name === undefined && !hostnames.has(host)) {
    if (hostnames.size >= HOSTNAMES_KEPT) hostnames.clear();
    hostnames.set(host, (name = hostnameOf(host)?.replace(/\.$/, '')));
  }
  return name;
}
const hostnames = new Map<string, string | undefined>();
const HOSTNAMES_KEPT = 256;

/**
 * An address, not a name: a rebound name is always a name (the page's own site), so a Host that
 * is an IP address was addressed to this machine (a LAN address, a pod's, 0.0.0.0 as printed
 * for a wildcard listener).
 */
const IP_LITERAL = /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/i;

/**
 * Why a request with these headers is refused, or undefined when it may proceed. `sameOrigin`:
 * an Origin must be this server's own (scheme, host and port as the request names them) or a
 * configured one — the check of a server without tokens, where a page on another port of the
 * same machine is as foreign as any; otherwise (`/mcp` with tokens) any port of an allowed host.
 */
export function refusal(policy: RebindingPolicy, host: string | undefined, origin: string | undefined, sameOrigin = false): string | undefined {
  const name = host === undefined ? undefined : requestHostname(host);
  if (name === undefined) return 'the request names no valid Host';
  const allowedHost = (n: string) => policy.hosts === '*' || policy.hosts.has(n) || IP_LITERAL.test(n);
  if (!allowedHost(name)) return `Host ${name} is not a name this server is reached by (allow it with --allowed-host or KURA_ALLOWED_HOSTS)`;
  if (origin === undefined) return undefined;
  if (policy.origins === '*' || policy.origins.has(origin)) return undefined;
  let from: URL;
  try {
    from = new URL(origin);
  } catch {
    return `Origin ${origin} may not call this server`;
  }
  const web = (from.protocol === 'http:' || from.protocol === 'https:') && from.origin === origin;
  if (web && (sameOrigin ? from.host === host!.toLowerCase() : allowedHost(from.hostname.replace(/\.$/, '')))) return undefined;
  return `Origin ${origin} may not call this server (allow it with --cors-origin or KURA_CORS_ORIGINS)`;
}
