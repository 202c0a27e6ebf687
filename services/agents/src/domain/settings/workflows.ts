import {
  decodeCursor,
  lockForTransaction,
  pageOf,
  pastPosition,
  positionAt,
  sql,
  type Selectable,
  type UserTx,
  type WorkflowNodesTable,
  type WorkflowsTable,
} from '@agentyard/db';
import { WorkspaceErrors } from '../../errors.ts';
import type { Static } from 'typebox';
import type { WorkflowCreateBody, WorkflowNodeInput, WorkflowUpdateBody } from '@agentyard/proto-schemas';

type NodeInput = Static<typeof WorkflowNodeInput>;

function decodeObject(value: string | object): Record<string, unknown> | null {
  if (typeof value !== 'string') return value as Record<string, unknown>;
  try {
    const parsed = JSON.parse(value) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A node as stored: `config` a JSON object (default `{}`), `position` `{x, y}` numbers (default 0, 0), both encoded. */
function encodeNode(node: NodeInput) {
  const config = node.config === undefined ? {} : decodeObject(node.config);
  if (!config) throw WorkspaceErrors.invalidNodeConfig();
  const position = node.position === undefined ? { x: 0, y: 0 } : decodeObject(node.position);
  if (!position || !Number.isFinite(position.x) || !Number.isFinite(position.y))
    throw WorkspaceErrors.invalidNodePosition();
  return {
    type: node.type,
    config: JSON.stringify(config),
    position: JSON.stringify({ x: position.x, y: position.y }),
  };
}

const toNode = (row: Selectable<WorkflowNodesTable>) => ({
  id: row.id,
  type: row.type,
  config: row.config,
  position: row.position,
  createdAt: row.created_at.toISOString(),
});

async function withNodes(trx: UserTx, workflows: Selectable<WorkflowsTable>[]) {
  const ids = workflows.map((w) => w.id);
  const nodes =
    ids.length === 0
      ? []
      : await trx.selectFrom('workflow_nodes').selectAll().where('workflow_id', 'in', ids).orderBy('seq').execute();
  return workflows.map((w) => ({
    id: w.id,
    name: w.name,
    description: w.description,
    enabled: w.enabled,
    createdAt: w.created_at.toISOString(),
    updatedAt: w.updated_at.toISOString(),
    nodes: nodes.filter((n) => n.workflow_id === w.id).map(toNode),
  }));
}

function requireName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw WorkspaceErrors.workflowNameRequired();
  return trimmed;
}

async function insertNodes(trx: UserTx, userId: string, workflowId: string, nodes: NodeInput[]) {
  const encoded = nodes.map(encodeNode);
  // One statement, rows in input order: the sequence numbers follow that order.
  if (encoded.length > 0)
    await trx
      .insertInto('workflow_nodes')
      .values(encoded.map((n) => ({ ...n, workflow_id: workflowId, user_id: userId })))
      .execute();
}

/**
 * One page of the user's workflows with their nodes, last updated first: (updated_at, id)
 * descending. A workflow updated during a walk moves to the front, behind the walk's cursor.
 */
export async function listWorkflows(trx: UserTx, page: { limit: number; cursor?: string }) {
  const after = page.cursor === undefined ? null : decodeCursor(page.cursor, 'uuid');
  if (page.cursor !== undefined && !after) throw WorkspaceErrors.invalidCursor();
  let query = trx.selectFrom('workflows').selectAll().select(positionAt('updated_at').as('page_at'));
  if (after) query = query.where(pastPosition('updated_at', 'id', after, 'desc', 'uuid'));
  const rows = await query
    .orderBy('updated_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .execute();
  const { rows: workflows, nextCursor } = pageOf(rows, page.limit, (row) => ({ at: row.page_at, id: row.id }));
  return { workflows: await withNodes(trx, workflows), nextCursor };
}

export async function getWorkflow(trx: UserTx, workflowId: string) {
  const row = await trx.selectFrom('workflows').selectAll().where('id', '=', workflowId).executeTakeFirst();
  if (!row) throw WorkspaceErrors.workflowNotFound();
  return (await withNodes(trx, [row]))[0]!;
}

/**
 * A new workflow, refused (429) once the user has `maxPerUser`: the count runs under a lock per
 * user held to commit, so two creations at once cannot both see room for one.
 */
export async function createWorkflow(
  trx: UserTx,
  userId: string,
  maxPerUser: number,
  input: Static<typeof WorkflowCreateBody>,
) {
  const name = requireName(input.name);
  const nodes = input.nodes ?? [];
  nodes.forEach(encodeNode);
  await lockForTransaction(trx, `workflows of ${userId}`);
  const { n } = await trx
    .selectFrom('workflows')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  if (Number(n) >= maxPerUser) throw WorkspaceErrors.workflowLimit(maxPerUser);
  const row = await trx
    .insertInto('workflows')
    .values({ user_id: userId, name, description: input.description ?? null, enabled: true })
    .returning('id')
    .executeTakeFirstOrThrow();
  await insertNodes(trx, userId, row.id, nodes);
  return getWorkflow(trx, row.id);
}

/** Changes the given fields; `nodes` replaces every node of the workflow (same transaction). */
export async function updateWorkflow(
  trx: UserTx,
  userId: string,
  workflowId: string,
  input: Static<typeof WorkflowUpdateBody>,
) {
  const name = input.name === undefined ? undefined : requireName(input.name);
  input.nodes?.forEach(encodeNode);
  const updated = await trx
    .updateTable('workflows')
    .set({
      updated_at: sql`clock_timestamp()`,
      ...(name !== undefined && { name }),
      ...(input.description !== undefined && { description: input.description }),
      ...(input.enabled !== undefined && { enabled: input.enabled }),
    })
    .where('id', '=', workflowId)
    .returning('id')
    .executeTakeFirst();
  if (!updated) throw WorkspaceErrors.workflowNotFound();
  if (input.nodes) {
    await trx.deleteFrom('workflow_nodes').where('workflow_id', '=', workflowId).execute();
    await insertNodes(trx, userId, workflowId, input.nodes);
  }
  return getWorkflow(trx, workflowId);
}

/** Deletes the workflow; its nodes go with it (foreign key cascade). */
export async function deleteWorkflow(trx: UserTx, workflowId: string) {
  const deleted = await trx.deleteFrom('workflows').where('id', '=', workflowId).returning('id').executeTakeFirst();
  if (!deleted) throw WorkspaceErrors.workflowNotFound();
}
