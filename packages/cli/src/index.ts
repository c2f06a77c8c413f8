export { main, buildProgram, VERSION } from './main.js';
export { EXIT, CliError } from './exit.js';
