import { clsx, type ClassValue } from 'clsx';
import { twMerge } from 'tailwind-merge';

// Join class names, letting later Tailwind utilities override conflicting earlier ones.
export function cn(...inputs: ClassValue[]) {
  return twMerge(clsx(inputs));
}
