import { openPool, uniqueName } from '../support/database.js';

/**
 * The inbox (migrated) and marks tables, and a pool of the test's own to read them with. `fixedMarks`: a
 * marks table named by the client's schema (Prisma's), shared by runs; markers are unique per test.
 */
export async function tables(label: string, fixedMarks?: string) {
  const inbox = uniqueName(`${label}_inbox`);
  const marks = fixedMarks ?? uniqueName(`${label}_marks`);
  const admin = await openPool({ connectionLimit: 2 });
  await admin.query(
    `create table if not exists ${marks} (id bigint auto_increment primary key, marker varchar(255) not null)`,
  );
  const rows = async (text: string, params: unknown[] = []) =>
    (await admin.query(text, params))[0] as Array<Record<string, unknown>>;
  const count = async (marker: string) =>
    Number((await rows(`select count(*) as n from ${marks} where marker = ?`, [marker]))[0]?.n);
  const drop = async () => {
    await admin.query(`drop table if exists ${fixedMarks ? '' : `${marks}, `}${inbox}, ${inbox}_keys`);
    await admin.end();
  };
  return { inbox, marks, rows, count, drop };
}
