// What `agentward dev` (dev.ts) and its server (dev-server.ts) tell each other over the IPC
// channel dev opens to it. The channel is also what makes a process dev's server: nothing in the
// environment, the command line or serve()'s options turns the dev inspector on (design §26).

/** dev → server, once, right after it starts: the run's token, whether to print the banner, the port to keep. */
export interface DevStart {
  type: 'start';
  /** The token a directory without auth is served with: one for the whole dev run. */
  token: string;
  /** True for the first server of the run; a restart prints no banner (dev prints one line for it). */
  banner: boolean;
  /** The port the first server bound (PORT=0 picks one): a restart listens there again. */
  port?: number;
}

/** server → dev: it listens on `port`, or the directory did not load and `port` answers 503. */
export type DevReport = { type: 'ready'; port: number } | { type: 'failed'; port: number };

/** The exit code of dev's server whose port is taken: dev then exits 1 instead of waiting for a file change. */
export const DEV_SERVER_PORT_IN_USE = 75;
