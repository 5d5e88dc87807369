// Geometry of the Version History rows, measured in the page that shows them (the webview tests' page, or the
// view's frame in the real workbench): whether a row's title is covered, and how many rows are in view. Each
// function is handed to Playwright's evaluate, so it uses nothing from outside its own body.

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}
interface PageElement {
  getBoundingClientRect(): Box;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement>;
  getAttribute(name: string): string | null;
  contains(other: PageElement | null): boolean;
  matches(selector: string): boolean;
  scrollWidth: number;
  ownerDocument: { elementFromPoint(x: number, y: number): PageElement | null };
}

export interface TitleReport {
  /** The row's title text. */
  label: string;
  selected: boolean;
  hovered: boolean;
  /** The title's box, cut to the list's visible part. */
  title: Box;
  /** The shown action buttons' boxes. */
  buttons: Box[];
  /** How many shown buttons overlap the title's box. */
  overlaps: number;
  /** `elementFromPoint` at the title's centre is the title (or text inside it). */
  hit: boolean;
  /** Pixels of the title shown, and the width it would take unshortened. */
  shownWidth: number;
  fullWidth: number;
  /** The title's and the details' vertical centres (one line per row: about equal). */
  titleMiddle: number;
  detailsMiddle: number;
}

/** One report per row now rendered whose title is (at least partly) in the list's visible area. */
export function titleReports(root: unknown): TitleReport[] {
  const doc = root as PageElement;
  const list = doc.querySelector('[role="listbox"]');
  if (!list) return [];
  const view = list.getBoundingClientRect();
  const reports: TitleReport[] = [];
  const rows = doc.querySelectorAll('[role="option"]');
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i];
    const label = row.querySelector('.label');
    const details = row.querySelector('.details');
    if (!label || !details) continue;
    const own = label.getBoundingClientRect();
    const title = {
      left: Math.max(own.left, view.left),
      top: Math.max(own.top, view.top),
      right: Math.min(own.right, view.right),
      bottom: Math.min(own.bottom, view.bottom),
    };
    if (title.bottom <= title.top) continue; // scrolled out of view
    const buttons: Box[] = [];
    const shown = row.querySelectorAll('.actions button');
    for (let b = 0; b < shown.length; b++) {
      const box = shown[b].getBoundingClientRect();
      if (box.right > box.left && box.bottom > box.top) buttons.push(box);
    }
    const overlaps = buttons.filter(
      (b) => b.left < title.right && b.right > title.left && b.top < title.bottom && b.bottom > title.top,
    ).length;
    const hit = row.ownerDocument.elementFromPoint((title.left + title.right) / 2, (title.top + title.bottom) / 2);
    const more = details.getBoundingClientRect();
    reports.push({
      label: label.getAttribute('title') ?? '',
      selected: row.getAttribute('aria-selected') === 'true',
      hovered: row.matches(':hover'),
      title,
      buttons,
      overlaps,
      hit: label.contains(hit),
      shownWidth: title.right - title.left,
      fullWidth: label.scrollWidth,
      titleMiddle: (own.top + own.bottom) / 2,
      detailsMiddle: (more.top + more.bottom) / 2,
    });
  }
  return reports;
}

/** How many rows lie wholly inside the list's visible area. */
export function rowsInView(root: unknown): number {
  const doc = root as PageElement;
  const list = doc.querySelector('[role="listbox"]');
  if (!list) return 0;
  const view = list.getBoundingClientRect();
  const rows = doc.querySelectorAll('[role="option"]');
  let count = 0;
  for (let i = 0; i < rows.length; i++) {
    const box = rows[i].getBoundingClientRect();
    if (box.top >= view.top - 0.5 && box.bottom <= view.bottom + 0.5) count++;
  }
  return count;
}

/** Where the last rendered row ends, in the page's pixels from its top (0 with no rows). */
export function rowsBottom(root: unknown): number {
  const rows = (root as PageElement).querySelectorAll('[role="option"]');
  let bottom = 0;
  for (let i = 0; i < rows.length; i++) bottom = Math.max(bottom, rows[i].getBoundingClientRect().bottom);
  return bottom;
}
