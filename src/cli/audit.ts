// `agentward audit export|head|verify` (design §34). The log of `export` and `head` is the one an
// agent directory's auth.ts exports as `audit` (`export const audit = { log: postgresAuditLog(…) }`);
// `verify` reads a JSON Lines file and needs no directory. Node only.
import { readFile } from 'node:fs/promises';
import { type AuditHead, chainHasher } from '../agent/audit-chain.ts';
import type { AuditLog } from '../agent/audit-log.ts';
import { verifyAuditLog } from '../agent/audit-verify.ts';
import { loadAuthFile } from '../agent-dir/resolve.ts';
import { CliError } from './errors.ts';

/** The log an agent directory's auth.ts exports as `audit: { log }`, or an error that says how to give one. */
export async function directoryAuditLog(dir: string): Promise<AuditLog> {
  const how = 'export const audit = { log } from auth.ts, e.g. { log: postgresAuditLog({ client, key }) }';
  const loaded = await loadAuthFile(dir);
  if (loaded === undefined) throw new CliError('CLI_NO_AUDIT_LOG', `${dir}: has no auth.ts, so no audit log: ${how}`);
  const audit = loaded.exports.audit as { log?: Partial<AuditLog> } | undefined;
  if (audit === undefined) throw new CliError('CLI_NO_AUDIT_LOG', `${loaded.file}: exports no audit log: ${how}`);
  const log = typeof audit === 'object' && audit !== null ? audit.log : undefined;
  if (typeof log?.read !== 'function' || typeof log.head !== 'function')
    throw new CliError(
      'CLI_NO_AUDIT_LOG',
      `${loaded.file}: its audit export is not { log } with a log of agentward (memoryAuditLog, postgresAuditLog, durableObjectAuditLog): ${how}`,
    );
  return log as AuditLog;
}

/** Writes `text` to stdout, waiting when the pipe is full. */
function write(text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(text, (error) => (error ? reject(error) : resolve()));
  });
}

/** `audit export`: the records from `since` (inclusive) to `until` (exclusive), one JSON object a line, in seq order. */
export async function auditExport(dir: string, range: { since?: string; until?: string }): Promise<number> {
  const log = await directoryAuditLog(dir);
  let count = 0;
  let lines = '';
  for await (const record of log.read(range)) {
    lines += `${JSON.stringify(record)}\n`;
    count++;
    if (lines.length >= 64 * 1024) {
      await write(lines);
      lines = '';
    }
  }
  await write(lines);
  console.error(`agentward: audit export: ${count} record${count === 1 ? '' : 's'}`);
  return 0;
}

/** `audit head`: the last `{ seq, hash }`, to keep elsewhere. */
export async function auditHead(dir: string): Promise<number> {
  const head = await (await directoryAuditLog(dir)).head();
  if (head === undefined) {
    console.error('agentward: audit head: the log is empty');
    return 1;
  }
  await write(`${JSON.stringify(head)}\n`);
  return 0;
}

const REASONS: Readonly<Record<string, string>> = {
  shape: 'not a record of the chain',
  seq: 'a record is missing there, or the records are out of order',
  prev: 'it does not link to the record before it',
  hash: 'the record was edited, or hashed under another key',
  head: 'its hash is not the kept head: the chain was rebuilt after it',
  truncated: 'the records end before the kept head',
};

/** `audit verify`: exit 0 when the chain in `file` holds (a note when it starts mid-chain), 1 naming the first broken seq. */
export async function auditVerify(file: string, options: { head?: AuditHead; key?: string }): Promise<number> {
  // A short key is said before the file is read (the message never shows it).
  chainHasher('audit verify: the key of --key-env', options.key);
  const text = await readFile(file, 'utf8');
  const records: unknown[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '') continue;
    try {
      records.push(JSON.parse(line));
    } catch {
      console.error(`agentward: audit verify: ${file}: line ${i + 1} is not JSON`);
      return 1;
    }
  }
  const result = await verifyAuditLog(records, {
    ...(options.key === undefined ? {} : { key: options.key }),
    ...(options.head === undefined ? {} : { head: options.head }),
  });
  if (!result.ok) {
    console.error(
      `agentward: audit verify: ${file}: broken at seq ${result.brokenSeq} (${result.reason}: ${REASONS[result.reason!]})`,
    );
    return 1;
  }
  const first = (records[0] as { seq?: number } | undefined)?.seq;
  const span =
    result.last === undefined ? 'no records' : `${result.records} records, seq ${first} to ${result.last.seq}`;
  console.log(
    `agentward: audit verify: ${file}: ${span}: the chain holds${options.key === undefined ? '' : ' under the key'}`,
  );
  if (result.midChain)
    console.log(
      `note: it starts mid-chain at seq ${first}: its first prev is taken as given, so records before it are not checked`,
    );
  if (options.head !== undefined)
    console.log(
      result.headChecked
        ? `the kept head (seq ${options.head.seq}) matches`
        : `note: the kept head's seq ${options.head.seq} is before the first record: not checked`,
    );
  return 0;
}
