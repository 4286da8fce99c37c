/** agentward's version, as in package.json (a test keeps them equal): the MCP route's `serverInfo.version`. */
export const VERSION = '0.1.0';
