import dotenv from 'dotenv';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import * as schema from './schema';

// Next.js loads .env itself; scripts run with tsx (seed) do not.
dotenv.config();

if (!process.env.POSTGRES_URL) {
  throw new Error('POSTGRES_URL is not set (add it to .env)');
}

export const client = postgres(process.env.POSTGRES_URL);
export const db = drizzle(client, { schema });
