/**
 * The ObjectStore contract held against real S3 servers on loopback, through @aws-sdk/client-s3:
 * versitygw (posix backend) and MinIO, built by scripts/fetch-s3-servers.sh.
 */
import { S3ObjectStore } from '../../src/node/s3-objects.js';
import { startS3Server, type S3ServerKind } from '../helpers/s3-servers.js';
import { objectStoreConformance } from './conformance.js';

for (const kind of ['versitygw', 'minio'] as S3ServerKind[]) {
  objectStoreConformance(kind, async () => {
    const server = await startS3Server(kind);
    const store = new S3ObjectStore(`s3://${server.bucket}/conformance`, { endpoint: server.endpoint, credentials: server.credentials });
    return { store, cleanup: () => server.stop() };
  });
}
