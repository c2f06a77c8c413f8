#!/usr/bin/env node
// The `kura` command. Compiled code lives in ../dist (pnpm build); see src/main.ts.
import { main } from '../dist/main.js';

process.exitCode = await main(process.argv);
