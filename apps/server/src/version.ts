/** Kura's version as the server says it (the MCP server's too): the kura command's, kept equal (packages/cli/test/mcp-cli.test.ts). */
export const VERSION = '0.1.0';
