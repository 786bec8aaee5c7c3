import { Queue, type QueueOptions } from "bullmq";

const unheard = (): void => undefined;

/**
 * Every queue the relay opens, so that each hears its connection's errors in one place. A queue passes
 * on its connection's errors (Redis away, every reconnect attempt) as its own "error" events, and
 * BullMQ prints those with no listener raw on stderr; the commands that use the connection report an
 * unreachable Redis in their own words, so a queue says nothing more. A queue also starts by asking
 * Redis its version on the connection it is given, and its close drops every listener of that
 * connection: a queue closed while the question is out (a command that opens one and closes it at
 * once) hears "Connection is closed" after, when the connection ends, and an error no one listens to
 * ends the process. The connection keeps a listener past the close.
 */
export class RelayQueue<DataType> extends Queue<DataType> {
  constructor(name: string, options: QueueOptions) {
    super(name, options);
    this.on("error", unheard);
  }

  override async close(): Promise<void> {
    const connection = this.connection;
    await super.close();
    connection.on("error", unheard);
  }
}
