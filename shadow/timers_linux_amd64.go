package shadow

const sysEpollPwait, sysEpollPwait2 = 281, 441
