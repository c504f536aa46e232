import type { Node } from 'web-tree-sitter';
import { namedChildrenOf } from './syntax-nodes.js';

/** What `service.py` imports from the apipod toolkit, and so which calls make its APIPod app. */

export const APP_CONSTRUCTOR = 'APIPod';
const JOB_PROGRESS = 'JobProgress';
const TOOLKIT_MODULE = 'apipod';

export interface ToolkitImports {
  /** Local names bound to `apipod.APIPod`. */
  constructorNames: Set<string>;
  /** Local names (or dotted paths) bound to the `apipod` module or one of its submodules. */
  moduleNames: Set<string>;
  /** Local names imported from elsewhere, which therefore are not the toolkit's APIPod. */
  foreignNames: Set<string>;
  /** `JobProgress` and the local names it is imported as. */
  jobProgressNames: Set<string>;
  hasStarImport: boolean;
}

export function readToolkitImports(statements: Node[]): ToolkitImports {
  const imports: ToolkitImports = {
    constructorNames: new Set(),
    moduleNames: new Set(),
    foreignNames: new Set(),
    jobProgressNames: new Set([JOB_PROGRESS]),
    hasStarImport: false,
  };
  for (const statement of statements) {
    if (statement.type === 'import_from_statement') {
      const isToolkit = isToolkitModule(statement.childForFieldName('module_name')?.text ?? '');
      if (namedChildrenOf(statement).some((node) => node.type === 'wildcard_import')) {
        // Only apipod's star brings APIPod in for sure; another module's may bring anything.
        if (isToolkit) imports.hasStarImport = true;
        else imports.foreignNames.add('*');
      }
      for (const name of statement.childrenForFieldName('name')) {
        const imported = name?.type === 'aliased_import' ? name.childForFieldName('name')?.text : name?.text;
        const local = name?.type === 'aliased_import' ? name.childForFieldName('alias')?.text : name?.text;
        if (local === undefined) continue;
        if (isToolkit && imported === APP_CONSTRUCTOR) imports.constructorNames.add(local);
        else if (isToolkit && imported === JOB_PROGRESS) imports.jobProgressNames.add(local);
        else imports.foreignNames.add(local);
      }
    } else if (statement.type === 'import_statement') {
      for (const name of statement.childrenForFieldName('name')) {
        if (name?.type === 'aliased_import') {
          const module = name.childForFieldName('name')?.text ?? '';
          const alias = name.childForFieldName('alias')?.text;
          if (isToolkitModule(module) && alias !== undefined) imports.moduleNames.add(alias);
        } else if (name !== null && isToolkitModule(name.text)) {
          // `import apipod.api` binds `apipod` and makes `apipod.api` reachable through it.
          imports.moduleNames.add(TOOLKIT_MODULE).add(name.text);
        }
      }
    }
  }
  return imports;
}

export function isToolkitModule(dottedName: string): boolean {
  return dottedName === TOOLKIT_MODULE || dottedName.startsWith(`${TOOLKIT_MODULE}.`);
}

/**
 * `APIPod(...)` as imported (or aliased) from apipod, or `apipod.APIPod(...)`: 'imported'; a
 * bare `APIPod(...)` nothing imports, still meant as the app: 'not imported'; else null.
 */
export function appCallKind(call: Node, imports: ToolkitImports): 'imported' | 'not imported' | null {
  const callee = call.childForFieldName('function');
  if (callee?.type === 'identifier') {
    if (imports.constructorNames.has(callee.text)) return 'imported';
    if (callee.text === APP_CONSTRUCTOR && !imports.foreignNames.has(APP_CONSTRUCTOR)) {
      return imports.hasStarImport ? 'imported' : 'not imported';
    }
  }
  const isModuleAttribute =
    callee?.type === 'attribute' &&
    callee.childForFieldName('attribute')?.text === APP_CONSTRUCTOR &&
    imports.moduleNames.has(withoutWhitespace(callee.childForFieldName('object')?.text ?? ''));
  return isModuleAttribute ? 'imported' : null;
}

function withoutWhitespace(text: string): string {
  return text.replace(/\s+/gu, '');
}
