// Runs merchant.ts once compiled (tsc emits merchant.js beside it): the credentials as JSON in argv[2],
// the answers as JSON on stdout.
import { run } from "./merchant.js";

process.stdout.write(`${JSON.stringify(await run(JSON.parse(process.argv[2])))}\n`);
