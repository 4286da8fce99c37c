// What a provider said, as agentward dev prints it: redacted of keys, header values, credential
// shapes and a URL's user name and password (design §26, §31).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redact } from '../../src/agent/provider-detail.ts';

test("redact: a URL's user name and password never reach the terminal, whatever the scheme; the host stays (design §26)", () => {
  assert.equal(
    redact('fetch failed: https://ada:hunter2-password@api.example/v1/chat/completions'),
    'fetch failed: https://[redacted]@api.example/v1/chat/completions',
  );
  assert.equal(redact('connect to postgres://svc:s3cret@db:5432/x'), 'connect to postgres://[redacted]@db:5432/x');
  assert.equal(
    redact('see https://api.example/v1 or mail ops@example.com'),
    'see https://api.example/v1 or mail ops@example.com',
  );
});

test('redact: the known secrets, bearer values and key shapes', () => {
  assert.equal(redact('key sk-abcdefgh12345678 sent', []), 'key [redacted] sent');
  assert.equal(redact('Authorization: Bearer abc.def'), 'Authorization: Bearer [redacted]');
  assert.equal(redact('header value custom-value-123 echoed', ['custom-value-123']), 'header value [redacted] echoed');
});
