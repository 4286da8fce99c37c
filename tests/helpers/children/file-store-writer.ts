// A child process for the restart-durability test: writes a stream of records to a file store
// and prints `ack <n>` after write batch n completed, until it is killed.
import { fileStore } from '../../../src/node/file-store.ts';
import type { Message } from '../../../src/agent/types.ts';

const dir = process.argv[2];
if (!dir) throw new Error('usage: file-store-writer.ts <dir>');
const store = fileStore(dir);
const messages: Message[] = [];
const createdAt = new Date().toISOString();

for (let n = 0; ; n++) {
  messages.push({ role: 'user', content: `message ${n} `.repeat(100) });
  await Promise.all([
    store.saveSession({
      id: 'session-1',
      messages: [...messages],
      audit: [],
      createdAt,
      updatedAt: new Date().toISOString(),
    }),
    store.appendMemory('issuer|user', `note ${n}`),
    store.saveCheckpoint({ approvalId: `approval-${n}`, sessionId: 'session-1', metadata: { n } }),
  ]);
  process.stdout.write(`ack ${n}\n`);
}
