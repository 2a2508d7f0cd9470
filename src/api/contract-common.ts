// What the /api/v1 route declarations share (docs/design/api-contract.md): the path
// parameters most routes take, and the answer of a removal. Every other answer is declared
// field by field in src/contract/.

import { z } from 'zod';

const pathText = z.string().min(1).max(100);

export const refParams = z.object({ ref: pathText.describe('An endpoint’s slug or id (`ep_…`).') });
export const idParams = z.object({ id: pathText.describe('The id in the path.') });
export const refIdParams = refParams.extend({ id: pathText.describe('The id in the path.') });

/** `{deleted: true}`, what a removal answers. */
export const deletedAnswer = z.object({ deleted: z.literal(true) });
