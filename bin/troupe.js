#!/usr/bin/env node
// The published command runs the compiled CLI (`npm run build` writes dist/).
import '../dist/cli/main.js';
