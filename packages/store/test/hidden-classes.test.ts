/**
 * Every store a process opens shares the hidden classes of its statement set and database
 * adapter (V8 maps). When the second store's differed, code optimized while the first one ran
 * was thrown away and every call on the adapter became a dictionary lookup: an object literal
 * of more than 128 properties, or one with a spread or an accessor, gets a class of its own.
 * Measured in a child process, where V8's own checks can be called.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('./fixtures/hidden-classes.mjs', import.meta.url));

describe('hidden classes across stores in one process', () => {
  it('shares the statement set and the database adapter among three stores', () => {
    const r = spawnSync(process.execPath, ['--allow-natives-syntax', FIXTURE], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const shapes = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, { shared: boolean; fast: boolean }>;
    // The control, a 130-property literal made three times, shows that the check can fail.
    expect(shapes.control).toEqual({ shared: false, fast: true });
    expect(shapes.statements).toEqual({ shared: true, fast: true });
    expect(shapes.database).toEqual({ shared: true, fast: true });
  });
});
