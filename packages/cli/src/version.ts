/** The kura command's version (also the MCP server's: @kura/server's VERSION, kept equal; test/mcp-cli.test.ts checks). */
export const VERSION = '0.1.0';
