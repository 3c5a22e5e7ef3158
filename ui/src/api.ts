// Typed calls to the app's commands. Command names, argument names and
// types and what each returns are all generated from the Rust commands
// (src/bindings/commands.ts, see src-tauri/src/ipc.rs); this only sends
// them and turns failures into `AppError`s.
import { invoke } from "@tauri-apps/api/core";
import type { AppError } from "./bindings/AppError";
import { commands, type Commands } from "./bindings/commands";

/** Turns whatever a failed command threw into an `AppError`. */
export function asAppError(e: unknown): AppError {
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    return e as AppError;
  }
  return { code: "error", message: e instanceof Error ? e.message : String(e) };
}

async function call<C extends keyof Commands>(command: C, args: Commands[C]["args"]): Promise<Commands[C]["returns"]> {
  try {
    return await invoke<Commands[C]["returns"]>(command, args);
  } catch (e) {
    throw asAppError(e);
  }
}

export const api = commands(call);

export type Api = typeof api;
