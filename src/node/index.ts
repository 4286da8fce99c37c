export { fileStore } from './file-store.ts';
