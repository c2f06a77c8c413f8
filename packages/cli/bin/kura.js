#!/usr/bin/env node
// The `kura` command: the bundle of src/main.ts in ../dist/bundle (pnpm build: tsc, then
// scripts/bundle.mjs; one file loads in a fraction of the time of ~215 modules).
import { main } from '../dist/bundle/main.js';

process.exitCode = await main(process.argv);
