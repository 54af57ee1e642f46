// A DraView over fixed lists: tests, `netattach check` (manifests and a cluster snapshot).
import { byScheduler, type DeviceClassInfo, type DraView, type TemplateDevices, type TemplateLookup } from './types.js';

export class StaticDraView implements DraView {
  private readonly byResource = new Map<string, DeviceClassInfo[]>();
  private readonly templates = new Map<string, Set<string>>();
  private readonly byName = new Map<string, DeviceClassInfo>();
  private readonly devices = new Map<string, TemplateDevices>();

  constructor(
    classes: readonly DeviceClassInfo[] = [],
    templates: ReadonlyArray<{ namespace: string; name: string; devices?: TemplateDevices }> = [],
  ) {
    for (const c of classes) this.addClass(c);
    for (const t of templates) this.addTemplate(t.namespace, t.name, t.devices);
  }

  addClass(c: DeviceClassInfo): void {
    this.byName.set(c.name, c);
    if (!c.extendedResourceName) return;
    const list = this.byResource.get(c.extendedResourceName) ?? [];
    list.push(c);
    list.sort(byScheduler);
    this.byResource.set(c.extendedResourceName, list);
  }

  /** `devices`: its requests, when known (a template read from a manifest or the cluster). */
  addTemplate(namespace: string, name: string, devices?: TemplateDevices): void {
    const set = this.templates.get(name) ?? new Set<string>();
    set.add(namespace);
    this.templates.set(name, set);
    if (devices) this.devices.set(`${namespace}/${name}`, devices);
  }

  deviceClass(name: string): DeviceClassInfo | undefined {
    return this.byName.get(name);
  }

  templateDevices(namespace: string, name: string): TemplateDevices | undefined {
    return this.devices.get(`${namespace}/${name}`);
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
