import { z } from 'zod';
import { redirect } from 'next/navigation';
import type { TeamDataWithMembers, User } from '../db/schema';
import { getTeamForUser, getUser } from '../db/queries';

// What a form's server action returns to useActionState: a message, plus any fields to refill the form with.
export type ActionState = {
  error?: string;
  success?: string;
  [key: string]: any;
};

type ValidatedActionFunction<S extends z.ZodTypeAny, T> = (
  data: z.infer<S>,
  formData: FormData
) => Promise<T>;

// A useActionState action that parses the form with `schema` and returns the first issue as `error`.
export function validatedAction<S extends z.ZodTypeAny, T>(
  schema: S,
  action: ValidatedActionFunction<S, T>
) {
  return async (prevState: ActionState, formData: FormData) => {
    const result = schema.safeParse(Object.fromEntries(formData));
    if (!result.success) {
      return { error: result.error.errors[0].message };
    }
    return action(result.data, formData);
  };
}

type ValidatedActionWithUserFunction<S extends z.ZodTypeAny, T> = (
  data: z.infer<S>,
  formData: FormData,
  user: User
) => Promise<T>;

// As validatedAction, for signed-in users only; the action also gets the user.
export function validatedActionWithUser<S extends z.ZodTypeAny, T>(
  schema: S,
  action: ValidatedActionWithUserFunction<S, T>
) {
  return async (prevState: ActionState, formData: FormData) => {
    const user = await getUser();
    if (!user) {
      throw new Error('User is not authenticated');
    }
    const validated = validatedAction(schema, (data, form) => action(data, form, user));
    return validated(prevState, formData);
  };
}

type ActionWithTeamFunction<T> = (
  formData: FormData,
  team: TeamDataWithMembers
) => Promise<T>;

// A form action that runs with the signed-in user's team; signed-out users go to /sign-in.
export function withTeam<T>(action: ActionWithTeamFunction<T>) {
  return async (formData: FormData): Promise<T> => {
    const user = await getUser();
    if (!user) {
      redirect('/sign-in');
    }
    const team = await getTeamForUser();
    if (!team) {
      throw new Error('Team not found');
    }
    return action(formData, team);
  };
}
