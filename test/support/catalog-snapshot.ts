import postgres from 'postgres';

export interface SnapshotOptions {
  /** only this schema's objects (the other schemas, excluded or not, are left out) */
  readonly schema?: string;
  /** definitions only, as pg_dump --schema-only: no row digests, no sequence positions */
  readonly definitionsOnly?: boolean;
}

/**
 * Every object and row outside `excluded` schemas, read from the catalogs: what pg_dump would
 * print, for a server newer than the machine's pg_dump (which refuses a newer major). Lines of
 * definitions (tables, columns, defaults, constraints, indexes, views, functions, triggers,
 * policies, sequences, types, extensions, owners, privileges) and one md5 per table of its rows.
 */
export async function catalogSnapshot(url: string, excluded: readonly string[], options: SnapshotOptions = {}): Promise<string> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const skip = ['information_schema', ...excluded];
    const ours = options.schema ? sql`n.nspname = ${options.schema}` : sql`n.nspname not like 'pg\\_%' and n.nspname <> all(${skip})`;
    const lines: string[] = [];
    const collect = async (rows: Promise<{ line: string | null }[]>) => {
      for (const row of await rows) lines.push(row.line ?? '(null)');
    };
    await collect(sql`select format('schema %s owner=%s acl=%s', n.nspname, pg_get_userbyid(n.nspowner), n.nspacl) as line
      from pg_namespace n where ${ours}`);
    await collect(sql`select format('rel %s.%s kind=%s owner=%s acl=%s', n.nspname, c.relname, c.relkind, pg_get_userbyid(c.relowner), c.relacl) as line
      from pg_class c join pg_namespace n on n.oid = c.relnamespace where ${ours}`);
    await collect(sql`select format('col %s.%s.%s %s notnull=%s default=%s identity=%s', n.nspname, c.relname, a.attname,
        format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid), a.attidentity) as line
      from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      where ${ours} and a.attnum > 0 and not a.attisdropped`);
    await collect(sql`select format('con %s.%s on %s: %s', n.nspname, co.conname, co.conrelid::regclass, pg_get_constraintdef(co.oid)) as line
      from pg_constraint co join pg_namespace n on n.oid = co.connamespace where ${ours}`);
    await collect(sql`select format('index %s', pg_get_indexdef(i.indexrelid)) as line
      from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace where ${ours}`);
    await collect(sql`select format('view %s.%s: %s', n.nspname, c.relname, pg_get_viewdef(c.oid)) as line
      from pg_class c join pg_namespace n on n.oid = c.relnamespace where ${ours} and c.relkind in ('v', 'm')`);
    await collect(sql`select format('function %s owner=%s acl=%s', case when p.prokind in ('f', 'p') then pg_get_functiondef(p.oid) else p.oid::regprocedure::text end,
        pg_get_userbyid(p.proowner), p.proacl) as line
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace where ${ours}`);
    await collect(sql`select format('trigger %s', pg_get_triggerdef(t.oid)) as line
      from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace where ${ours} and not t.tgisinternal`);
    await collect(sql`select format('policy %s.%s %s %s %s', schemaname, tablename, policyname, qual, with_check) as line
      from pg_policies p join pg_namespace n on n.nspname = p.schemaname where ${ours}`);
    await collect(sql`select format('sequence %s.%s last=%s', schemaname, sequencename, ${options.definitionsOnly ? sql`null::bigint` : sql`last_value`}) as line
      from pg_sequences s join pg_namespace n on n.nspname = s.schemaname where ${ours}`);
    await collect(sql`select format('type %s.%s %s labels=%s', n.nspname, t.typname, t.typtype,
        (select string_agg(e.enumlabel, ',' order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid)) as line
      from pg_type t join pg_namespace n on n.oid = t.typnamespace where ${ours} and t.typtype in ('e', 'd', 'r', 'm')`);
    await collect(sql`select format('extension %s %s in %s', x.extname, x.extversion, n.nspname) as line
      from pg_extension x join pg_namespace n on n.oid = x.extnamespace`);
    await collect(sql`select format('default acl %s %s %s', pg_get_userbyid(d.defaclrole), d.defaclnamespace::regnamespace, d.defaclacl) as line
      from pg_default_acl d`);
    if (options.definitionsOnly) return lines.sort().join('\n');
    const tables = await sql<{ name: string }[]>`select format('%I.%I', n.nspname, c.relname) as name
      from pg_class c join pg_namespace n on n.oid = c.relnamespace where ${ours} and c.relkind in ('r', 'p')`;
    for (const { name } of tables) {
      const [row] = await sql.unsafe<{ rows: string | null; n: string }[]>(
        `select md5(string_agg(t::text, E'\\n' order by t::text)) as rows, count(*)::text as n from ${name} t`,
      );
      lines.push(`rows ${name} ${row?.n} ${row?.rows}`);
    }
    return lines.sort().join('\n');
  } finally {
    await sql.end({ timeout: 1 });
  }
}
