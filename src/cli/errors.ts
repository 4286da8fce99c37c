// SPDX-License-Identifier: MIT

/** The codes of `CliError`. */
export type CliErrorCode = 'CLI_DIRECTORY' | 'CLI_ENV_INVALID' | 'CLI_DATABASE' | 'CLI_NO_AUDIT_LOG';

/**
 * What a command of `agentward` fails with, besides a wrong command line (exit 2) and the errors
 * of the library it runs; the command prints `agentward: <message> (<code>)` and exits 1.
 * `CLI_DIRECTORY`: the directory named does not exist, is no directory, is a build output the
 * command does not run, or already holds an agent `init` would overwrite. `CLI_ENV_INVALID`: an
 * environment variable the command reads (`PORT`, the one `--key-env` names, `AGENT_DATABASE_URL`
 * without the `pg` driver installed) cannot be used. `CLI_DATABASE`: the database of
 * `AGENT_DATABASE_URL` could not be migrated (the driver's reason follows, never the URL).
 * `CLI_NO_AUDIT_LOG`: the agent directory exports no audit log for `agentward audit`.
 */
export class CliError extends Error {
  readonly code: CliErrorCode;

  constructor(code: CliErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CliError';
    this.code = code;
  }
}
