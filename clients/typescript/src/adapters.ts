// From the message shapes chat apps already hold to branchmem events, so an app
// mirrors its tree in one call per turn. Ids are the messages' own, and adding an
// event again with the same content adds nothing, so sending a message twice (or
// the whole conversation every turn) is safe. Mirror a message once it is final:
// a streamed reply whose text later grows is a different content under the same
// id, which the server refuses (`ConflictingEvent`).
import type { BranchmemClient } from "./client.js";
import type { Event, EventInput, Role } from "./types.js";

/** A part of a message: only `{type: "text", text}` parts become content. */
export interface MessagePart {
  type: string;
  text?: string;
}

/** A message of the AI SDK's `useChat` (`UIMessage`: `parts`; older `Message`: `content`). */
export interface AiSdkMessage {
  id: string;
  role: string;
  content?: string | MessagePart[];
  parts?: MessagePart[];
}

/** assistant-ui's exported message repository: every message with its parent's id. */
export interface AssistantUiRepository {
  headId?: string | null;
  messages: { message: { id: string; role: string; content: string | readonly MessagePart[] }; parentId: string | null }[];
}

const ROLES: readonly string[] = ["user", "assistant", "tool", "system", "note"];

function role(r: string): Role {
  return (ROLES.includes(r) ? r : "note") as Role; // the AI SDK's "data" is a note
}

function text(content: string | readonly MessagePart[] | undefined): string {
  if (typeof content === "string") return content;
  return (content ?? [])
    .filter((p) => p.type === "text" && typeof p.text === "string")
    .map((p) => p.text)
    .join("\n");
}

/** The AI SDK's messages (one path, oldest first) as events: each message's parent is
 *  the one before it; the first one's is `parent` (a root when left out).
 *
 * ```ts
 * await bm.addEvents(fromAiSdk(messages)); // in onFinish: one call per turn
 * ```
 * An edit or a regeneration in the app gives a message a new id after the same
 * previous message, so it lands as a sibling: a new branch of the tree. */
export function fromAiSdk(messages: readonly AiSdkMessage[], options: { parent?: string | null } = {}): EventInput[] {
  let parent: string | null = options.parent ?? null;
  return messages.map((m) => {
    const content = m.parts && m.parts.some((p) => p.type === "text") ? text(m.parts) : text(m.content);
    const event: EventInput = { id: m.id, parent, role: role(m.role), content };
    parent = m.id;
    return event;
  });
}

/** assistant-ui's message repository (`thread.export()`, or `ExportedMessageRepository`)
 *  as events, every parent before its children; the app's current tip is `repo.headId`. */
export function fromAssistantUi(repo: AssistantUiRepository): EventInput[] {
  const byId = new Map(repo.messages.map((m) => [m.message.id, m]));
  const out: EventInput[] = [];
  const done = new Set<string>();
  const visit = (id: string, seen: Set<string>): void => {
    const item = byId.get(id);
    if (!item || done.has(id) || seen.has(id)) return; // a cycle is left to the server's check
    seen.add(id);
    if (item.parentId !== null) visit(item.parentId, seen);
    done.add(id);
    const m = item.message;
    out.push({ id: m.id, parent: item.parentId, role: role(m.role), content: text(m.content) });
  };
  for (const m of repo.messages) visit(m.message.id, new Set());
  return out;
}

/** Send the events of one turn in one request (no-ops for those already stored). */
export function mirror(client: BranchmemClient, events: EventInput[]): Promise<Event[]> {
  return client.addEvents(events);
}
