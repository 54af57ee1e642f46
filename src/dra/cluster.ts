// The two DRA watches together, as one DraView for the server.
import type { KubeCredentials, KubeTransport } from '../kube/index.js';
import { ClusterClaimTemplates } from './claim-templates.js';
import { ClusterDeviceClasses, type DraLogger } from './device-classes.js';
import type { DeviceClassInfo, DraView, TemplateDevices, TemplateLookup } from './types.js';

export class ClusterDra implements DraView {
  readonly classes: ClusterDeviceClasses;
  readonly templates: ClusterClaimTemplates;

  constructor(kc: KubeCredentials | undefined, options: { transport?: KubeTransport; logger?: DraLogger; backoffMs?: number } = {}) {
    this.classes = new ClusterDeviceClasses(kc, options);
    this.templates = new ClusterClaimTemplates(kc, options);
  }

  async start(): Promise<void> {
    await Promise.all([this.classes.start(), this.templates.start()]);
  }

  async stop(): Promise<void> {
    await Promise.all([this.classes.stop(), this.templates.stop()]);
  }

  classesFor(resource: string): readonly DeviceClassInfo[] {
    return this.classes.classesFor(resource);
  }

  template(namespace: string, name: string): TemplateLookup {
    return this.templates.template(namespace, name);
  }

  templateNamespaces(name: string): readonly string[] | undefined {
    return this.templates.templateNamespaces(name);
  }

  deviceClass(name: string): DeviceClassInfo | undefined {
    return this.classes.deviceClass(name);
  }

  templateDevices(namespace: string, name: string): TemplateDevices | undefined {
    return this.templates.templateDevices(namespace, name);
  }
}
