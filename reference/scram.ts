// A password as PostgreSQL stores it (SCRAM-SHA-256), computed here so that CREATE/ALTER ROLE never
// carries the clear password: with log_statement=ddl (or all) the server log would otherwise hold it.
// Format (RFC 5803 / PostgreSQL's pg_authid): SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>.
import crypto from 'node:crypto';

export function scramSha256Verifier(password: string, iterations = 4096): string {
  // PostgreSQL applies SASLprep; NFKC is its normalization step and is exact for the printable passwords
  // the rig generates.
  const normalized = password.normalize('NFKC');
  const salt = crypto.randomBytes(16);
  const salted = crypto.pbkdf2Sync(normalized, salt, iterations, 32, 'sha256');
  const clientKey = crypto.createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = crypto.createHash('sha256').update(clientKey).digest();
  const serverKey = crypto.createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}
