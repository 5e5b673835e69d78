import { createTestDatabase } from './helpers/db.js';
const t = await createTestDatabase('plans_repro');
console.log(t.url);
await t.database.close();
