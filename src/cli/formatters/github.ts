// `--format github`: GitHub Actions workflow commands; data and properties escaped as the runner
// expects. No summary: the runner counts the annotations itself.
import type { Formatter } from './types.js';

export const formatGithub: Formatter = ({ diagnostics }) => {
  const data = (s: string) => s.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
  const prop = (s: string) => data(s).replace(/:/g, '%3A').replace(/,/g, '%2C');
  return diagnostics
    .map((d) => `::${d.severity === 'error' ? 'error' : 'warning'} file=${prop(d.file)},line=${d.line},col=${d.column}::${data(d.message)}\n`)
    .join('');
};
