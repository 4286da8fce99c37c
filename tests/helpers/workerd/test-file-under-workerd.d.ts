// The test file a worker bundle of node-test-worker.ts runs: an esbuild alias chosen per bundle.
declare module 'test-file-under-workerd';
