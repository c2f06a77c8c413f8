/** The kura command's version (also the MCP server's). */
export const VERSION = '0.1.0';
