/** What `p` rejects with (a test that expects a typed error looks at its code and message); a fulfilment fails the test. */
export async function failure(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error('expected a failure');
}
