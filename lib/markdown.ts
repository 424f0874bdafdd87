// Markdown table cells: a `|` would end the cell and a newline the row.
export const mdCell = (s: string): string => s.replaceAll('|', '\\|').replaceAll('\n', ' ');
