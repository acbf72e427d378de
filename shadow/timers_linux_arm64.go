package shadow

const sysEpollPwait, sysEpollPwait2 = 22, 441
