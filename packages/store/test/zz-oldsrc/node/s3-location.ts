/** S3 locations (`s3://bucket/prefix`), read without loading the S3 client (decision 0040). */
import { InvalidInputError } from '../errors.js';
import { checkKey } from '../objects/object-store.js';

/** `s3://bucket/prefix` as its bucket and key prefix (`prefix/`, or "" for the bucket's root). */
export function parseS3Location(location: string): { bucket: string; prefix: string } {
  const m = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(\/.*)?$/.exec(location);
  if (!m) throw new InvalidInputError(`an S3 location is s3://bucket or s3://bucket/prefix (bucket: 3-63 lowercase letters, digits, dots and hyphens), not ${JSON.stringify(location)}`, 'location');
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  if (prefix) checkKey(prefix);
  return { bucket: m[1]!, prefix: prefix ? `${prefix}/` : '' };
}

/** Whether `location` names an object store rather than a directory. */
export function isObjectLocation(location: string): boolean {
  return location.startsWith('s3://');
}
