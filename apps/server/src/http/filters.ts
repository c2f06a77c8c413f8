/** The document filters list and search share, from query strings to the store's options. */
import { z } from 'zod';

export const FilterQuery = {
  tag: z.string().optional(),
  type: z.string().optional().describe('media type'),
  pathPrefix: z.string().optional(),
  since: z.string().optional().describe('ISO 8601 time or milliseconds since the epoch'),
  until: z.string().optional().describe('ISO 8601 time or milliseconds since the epoch'),
};

/** A time from a query string: ISO 8601 or milliseconds since the epoch. */
export const timeOf = (t: string) => (/^\d+$/.test(t) ? Number(t) : t);

export function filtersOf(q: { tag?: string | undefined; type?: string | undefined; pathPrefix?: string | undefined; since?: string | undefined; until?: string | undefined }) {
  return {
    ...(q.tag !== undefined ? { tag: q.tag } : {}),
    ...(q.type !== undefined ? { mediaType: q.type } : {}),
    ...(q.pathPrefix !== undefined ? { pathPrefix: q.pathPrefix } : {}),
    ...(q.since !== undefined ? { since: timeOf(q.since) } : {}),
    ...(q.until !== undefined ? { until: timeOf(q.until) } : {}),
  };
}
