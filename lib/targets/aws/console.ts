// What a node's serial console says, from the control host: EC2 GetConsoleOutput (the latest output,
// AWS keeps the last 64 KB) of the campaign's nodes, found by tag. The nodes' user data writes its
// log there too (user-data.ts), so a node whose worker never took a task tells why (a failed dnf, an
// AccessDenied on the package, a bad Temporal address) in the campaign's own failure, without SSH or SSM.
// The output holds no secret: the user data never prints one. What it returns is bounded (it goes into
// a failure message, and so into history).
import { GetConsoleOutputCommand } from '@aws-sdk/client-ec2';
import type { AwsClients } from './clients';
import { findRigResources } from './find';

/** Lines and characters kept of each node's console. */
export const CONSOLE_TAIL_LINES = 20;
export const CONSOLE_TAIL_CHARS = 1500;

/** The last lines of `text`, control characters (the console's colours, carriage returns) taken out. */
export function consoleTail(text: string, lines = CONSOLE_TAIL_LINES, chars = CONSOLE_TAIL_CHARS): string {
  const clean = text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '').replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '');
  const tail = clean.split('\n').map((l) => l.trimEnd()).filter(Boolean).slice(-lines).join('\n');
  return tail.length > chars ? `...${tail.slice(-chars)}` : tail;
}

/** Each node's console tail, `<kind> <instance id>:` before its lines; a node AWS has no output for (yet) says so. */
export async function nodeConsoleTails(c: AwsClients, campaignId: string): Promise<string> {
  const nodes = (await findRigResources(c, campaignId)).filter((r) => r.kind === 'app-node' || r.kind === 'load-node');
  if (!nodes.length) return `no node of ${campaignId} found`;
  const parts: string[] = [];
  for (const n of nodes) {
    try {
      const r = await c.ec2.send(new GetConsoleOutputCommand({ InstanceId: n.id, Latest: true }));
      const text = r.Output ? consoleTail(Buffer.from(r.Output, 'base64').toString('utf8')) : '';
      parts.push(`${n.kind} ${n.id}: ${text ? `\n${text}` : 'no console output yet (EC2 publishes it a few minutes after boot)'}`);
    } catch (err) {
      parts.push(`${n.kind} ${n.id}: GetConsoleOutput failed (${(err as Error).name}: ${(err as Error).message.slice(0, 200)})`);
    }
  }
  return parts.join('\n');
}
