// A DraView over fixed lists: tests, `netattach check` (manifests and a cluster snapshot).
import { byScheduler, type DeviceClassInfo, type DraView, type TemplateLookup } from './types.js';

export class StaticDraView implements DraView {
  private readonly byResource = new Map<string, DeviceClassInfo[]>();
  private readonly templates = new Map<string, Set<string>>();

  constructor(classes: readonly DeviceClassInfo[] = [], templates: ReadonlyArray<{ namespace: string; name: string }> = []) {
    for (const c of classes) this.addClass(c);
    for (const t of templates) this.addTemplate(t.namespace, t.name);
  }

  addClass(c: DeviceClassInfo): void {
    if (!c.extendedResourceName) return;
    const list = this.byResource.get(c.extendedResourceName) ?? [];
    list.push(c);
    list.sort(byScheduler);
    this.byResource.set(c.extendedResourceName, list);
  }

  addTemplate(namespace: string, name: string): void {
    const set = this.templates.get(name) ?? new Set<string>();
    set.add(namespace);
    this.templates.set(name, set);
  }

  classesFor(resource: string): readonly DeviceClassInfo[] {
    return this.byResource.get(resource) ?? [];
  }

  template(namespace: string, name: string): TemplateLookup {
    return this.templates.get(name)?.has(namespace) ? { status: 'found' } : { status: 'not-found' };
  }

  templateNamespaces(name: string): readonly string[] {
    return [...(this.templates.get(name) ?? [])].sort();
  }
}
