/**
 * An encrypted store's configuration object (FORMAT.md §17.3): a public header — the format,
 * its version, the store's id and the encryption scheme, all a reader needs to find the key
 * files and open the rest — and the other settings sealed (the chunking seed among them is
 * secret: with it, record lengths would fingerprint known files).
 */
import { CorruptDataError, toHex } from '@kura/core';
import { ENCRYPTION_SCHEME, type Sealing } from './sealing.js';

/** The keys an encrypted store's configuration shows in plain form. */
const PUBLIC = ['format', 'format_version', 'store_id', 'encryption'] as const;
/** The format version of encrypted stores (plain stores stay at 1). */
export const ENCRYPTED_FORMAT_VERSION = 2;

const utf8 = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

function parsed(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(decoder.decode(bytes)) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The store id of an encrypted store's configuration object; undefined for a plain store's
 * (or bytes that are no configuration: the catalog's reader says what is wrong with them).
 */
export function encryptedStoreId(raw: Uint8Array | undefined): string | undefined {
  const j = raw && raw.length ? parsed(raw) : undefined;
  if (!j || j.encryption === undefined) return undefined;
  if (j.encryption !== ENCRYPTION_SCHEME) throw new CorruptDataError(`the store's configuration names encryption ${JSON.stringify(j.encryption)}; this Kura knows ${ENCRYPTION_SCHEME}`, 'config');
  if (typeof j.store_id !== 'string' || !/^[0-9a-f]{32}$/.test(j.store_id)) throw new CorruptDataError("an encrypted store's configuration without a store id", 'config');
  return j.store_id;
}

/** The configuration object of an encrypted store whose settings are the JSON map `plain`. */
export function sealConfig(plain: Uint8Array, sealing: Sealing): Uint8Array {
  const j = parsed(plain);
  if (!j) throw new CorruptDataError('a configuration to seal is not a JSON object', 'config');
  const out: Record<string, unknown> = { encryption: ENCRYPTION_SCHEME };
  const secret: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(j)) {
    if ((PUBLIC as readonly string[]).includes(k)) out[k] = v;
    else secret[k] = v;
  }
  out.format_version = String(ENCRYPTED_FORMAT_VERSION);
  out.store_id = sealing.storeId;
  out.sealed = toHex(sealing.sealConfig(utf8.encode(JSON.stringify(secret))));
  return utf8.encode(`${JSON.stringify(out, null, 2)}\n`);
}

/** The settings of an encrypted store's configuration object, as one JSON map (public and sealed keys). */
export function openConfig(raw: Uint8Array, sealing: Sealing): Uint8Array {
  const j = parsed(raw);
  const sealed = typeof j?.sealed === 'string' && /^(?:[0-9a-f]{2})+$/.test(j.sealed) ? Uint8Array.from(j.sealed.match(/../g)!, (h) => parseInt(h, 16)) : undefined;
  if (!j || !sealed) throw new CorruptDataError("an encrypted store's configuration without its sealed settings", 'config');
  if (j.store_id !== sealing.storeId) throw new CorruptDataError(`the configuration is store ${String(j.store_id)}'s, not ${sealing.storeId}'s`, 'config');
  const secret = parsed(sealing.openConfig(sealed));
  if (!secret) throw new CorruptDataError("an encrypted store's sealed settings are not a JSON object", 'config');
  const out: Record<string, unknown> = {};
  for (const k of PUBLIC) if (j[k] !== undefined) out[k] = j[k];
  for (const [k, v] of Object.entries(secret)) if (!(PUBLIC as readonly string[]).includes(k)) out[k] = v;
  return utf8.encode(JSON.stringify(out));
}
