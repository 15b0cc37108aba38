import { compare, hash } from 'bcryptjs';
import { SignJWT, jwtVerify } from 'jose';
import { cookies } from 'next/headers';
import type { NewUser } from '../db/schema';

const SALT_ROUNDS = 10;
const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

export type SessionData = {
  user: { id: number };
  expires: string;
};

function secretKey() {
  const secret = process.env.AUTH_SECRET;
  if (!secret) throw new Error('AUTH_SECRET is not set (add it to .env)');
  return new TextEncoder().encode(secret);
}

export function hashPassword(password: string) {
  return hash(password, SALT_ROUNDS);
}

export function comparePasswords(plainTextPassword: string, hashedPassword: string) {
  return compare(plainTextPassword, hashedPassword);
}

export async function signToken(payload: SessionData) {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime('1 day from now')
    .sign(secretKey());
}

export async function verifyToken(input: string) {
  const { payload } = await jwtVerify(input, secretKey(), {
    algorithms: ['HS256'],
  });
  return payload as SessionData;
}

// The signed-in session from the request's cookie, or null.
export async function getSession() {
  const session = (await cookies()).get('session')?.value;
  if (!session) return null;
  return verifyToken(session);
}

export async function setSession(user: NewUser) {
  const expires = new Date(Date.now() + SESSION_TTL_MS);
  const session: SessionData = {
    user: { id: user.id! },
    expires: expires.toISOString(),
  };
  const token = await signToken(session);
  (await cookies()).set('session', token, {
    expires,
    httpOnly: true,
    secure: true,
    sameSite: 'lax',
  });
}
