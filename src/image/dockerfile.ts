import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ejs from 'ejs';
import { SERVING_HEALTH_STATES } from '../worker/health-state.js';
import { findSvcPackageRoot } from '../worker/svc-package.js';
import type { BuildPlan } from './build-plan.js';
import { comment, execForm, quoteWord, shellQuote } from './dockerfile-quoting.js';
import { STAGED_FILES } from './runtime-staging.js';
import {
  APP_DIR_IN_IMAGE,
  COMPUTE_ENV,
  INSTALLED_PYTHON_DIR,
  INSTALLED_VENV_DIR,
  PROVIDER_ENV,
  RUNTIME_DIR_IN_IMAGE,
} from './runtime-images.js';

export const DOCKERFILE_TEMPLATE = 'Dockerfile.ejs';

/** templates/Dockerfile.ejs from svc's own package (beside dist/ when bundled, the repo root from source). */
export function loadDockerfileTemplate(packageRoot: string = findSvcPackageRoot(import.meta.url)): string {
  return readFileSync(join(packageRoot, 'templates', DOCKERFILE_TEMPLATE), 'utf8');
}

/**
 * The Dockerfile text for a plan: pure, given the template. The template sees the plan and
 * quoting helpers only; `<%= %>` (ejs's HTML escaping, wrong for a Dockerfile) throws, so
 * every value goes through a helper chosen for where it lands.
 */
export function renderDockerfile(plan: BuildPlan, template: string = loadDockerfileTemplate()): string {
  const command = ['node', `${RUNTIME_DIR_IN_IMAGE}/dist/svc.js`, 'start', `${APP_DIR_IN_IMAGE}/${plan.entrypoint}`,
    '--host', '0.0.0.0', '--port', String(plan.port), '--python', 'python3'];
  // /health answers 200 in every state; healthy means taking calls, not STARTING or DEFUNCT.
  const healthcheck = plan.provider === 'runpod' ? null : ['node', '-e',
    `fetch('http://127.0.0.1:${plan.port}/health').then((r) => r.json()).then((h) => process.exit(${JSON.stringify(SERVING_HEALTH_STATES)}.includes(h.status) ? 0 : 1), () => process.exit(1))`];
  // The image's `python`, as the pip steps call it, with the toolkit on PYTHONPATH as the workers have it.
  const compileCheck = `PYTHONPATH=${RUNTIME_DIR_IN_IMAGE}/python python -m apipod._runtime.compile_check ${shellQuote(plan.entrypoint)}`;
  const { requirements, constraints, compiled, pipOptions } = plan.requirementFiles;
  const requirementSources = [
    ...(requirements ? [STAGED_FILES.requirements] : []),
    ...(constraints ? [STAGED_FILES.constraints] : []),
    ...(compiled ? [STAGED_FILES.compiledRequirements] : []),
    ...(pipOptions ? [STAGED_FILES.pipOptions] : []),
  ];
  // svc's own packages (the toolkit's, the provider's), after the project's requirements and
  // from its indexes: pip takes an -r file of options alone.
  const svcPackages = [...plan.toolkitPackages, ...plan.providerPackages];
  const installPackages = (packages: string[]) =>
    ['python -m pip install', ...(pipOptions ? [`-r ${RUNTIME_DIR_IN_IMAGE}/pip-options.txt`] : []), ...packages.map(shellQuote)].join(' ');
  const text = ejs.render(
    template,
    {
      plan,
      command,
      compileCheck,
      healthcheck,
      requirementSources,
      svcPackages,
      installPackages,
      paths: { runtime: RUNTIME_DIR_IN_IMAGE, app: APP_DIR_IN_IMAGE, python: INSTALLED_PYTHON_DIR, venv: INSTALLED_VENV_DIR },
      env: { compute: COMPUTE_ENV, provider: PROVIDER_ENV },
      q: quoteWord,
      exec: execForm,
      sh: shellQuote,
      comment,
    },
    {
      escape: () => {
        throw new Error('internal: templates/Dockerfile.ejs used <%= %>; place values with a quoting helper and <%- %>');
      },
      strict: true,
      _with: false,
      localsName: 'it',
      destructuredLocals: ['plan', 'command', 'compileCheck', 'healthcheck', 'requirementSources', 'svcPackages', 'installPackages', 'paths', 'env', 'q', 'exec', 'sh', 'comment'],
    },
  );
  return `${text.replace(/\n{3,}/g, '\n\n').trimEnd()}\n`;
}
