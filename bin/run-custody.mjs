#!/usr/bin/env node
// `npx run-custody …`: loads the TypeScript command line (scripts/run-custody.ts) through tsx.
import { register } from "tsx/esm/api";

register();
await import("../scripts/run-custody.ts");
